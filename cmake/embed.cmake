# Turns INPUT into a C source defining `const char SYMBOL[]` (NUL-terminated) and `const unsigned long SYMBOL_len`.
file(READ ${INPUT} hex HEX)
string(LENGTH "${hex}" n)
math(EXPR len "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" body "${body}")
file(WRITE ${OUTPUT} "/* Generated from ${INPUT} by cmake/embed.cmake. Do not edit. */\n"
                     "const char ${SYMBOL}[] = {\n${body}0x00};\nconst unsigned long ${SYMBOL}_len = ${len}UL;\n")
