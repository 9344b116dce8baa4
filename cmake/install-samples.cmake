# Installs the samples: the files a sample is made of (.geo, .msh, problem .xml, README.md, NAME.expected.txt)
# from SOURCE (the repository's inputs/) into DESTINATION, and never what running them leaves behind (results/
# folders, VTU/HDF5 files, summaries, hidden temporary files). Each problem's xsi:noNamespaceSchemaLocation is
# pointed at the installed schema: ../../io/problem.xsd in the repository, ../../problem.xsd once installed (the
# schema goes to share/femto/problem.xsd, the samples to share/femto/inputs/NAME/).
#   cmake -DSOURCE=inputs -DDESTINATION=/prefix/share/femto/inputs -P install-samples.cmake
# or from an install(CODE) rule, where file(INSTALL) also honours DESTDIR and records the install manifest.
if(NOT SOURCE OR NOT DESTINATION)
  message(FATAL_ERROR "install-samples.cmake needs -DSOURCE=... and -DDESTINATION=...")
endif()
file(GLOB samples LIST_DIRECTORIES true "${SOURCE}/*")
foreach(sample ${samples})
  if(NOT IS_DIRECTORY "${sample}")
    continue()
  endif()
  get_filename_component(name "${sample}" NAME)
  file(GLOB files "${sample}/*.geo" "${sample}/*.msh" "${sample}/*.xml" "${sample}/README.md"
                  "${sample}/*.expected.txt")
  file(INSTALL DESTINATION "${DESTINATION}/${name}" TYPE FILE FILES ${files})
  file(GLOB problems "$ENV{DESTDIR}${DESTINATION}/${name}/*.xml")
  foreach(problem ${problems})
    file(READ "${problem}" text)
    string(REPLACE "xsi:noNamespaceSchemaLocation=\"../../io/problem.xsd\""
                   "xsi:noNamespaceSchemaLocation=\"../../problem.xsd\"" text "${text}")
    file(WRITE "${problem}" "${text}")
  endforeach()
endforeach()
