# Writes the mesh of a .geo script with the gmsh command line in three formats, for test_mesh_formats:
#   OUT_41.msh (4.1 ASCII), OUT_41bin.msh (4.1 binary, converted from the ASCII file) and OUT_22.msh (2.2 ASCII).
# cmake -DGMSH=gmsh -DGEO=file.geo -DDIM=3 -DORDER=2 -DOUT=prefix -P write_formats.cmake
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "'${ARGN}' failed (${rc}):\n${out}")
  endif()
endfunction()
run(${GMSH} ${GEO} -${DIM} -order ${ORDER} -format msh41 -o ${OUT}_41.msh)
run(${GMSH} ${OUT}_41.msh -0 -bin -format msh41 -o ${OUT}_41bin.msh)
run(${GMSH} ${OUT}_41.msh -0 -format msh22 -o ${OUT}_22.msh)
