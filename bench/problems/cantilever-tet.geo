// Cantilever for the solver benchmark (issue 11): a beam 1 m long (x), 0.1 m wide (y) and 0.1 m high (z) of
// unstructured tetrahedra; the cell size comes from the problem file's <mesh size="...">.
// Groups: "beam" (the volume), "clamp" (x = 0), "top" (z = 0.1, loaded), "tip" (x = 1).
SetFactory("OpenCASCADE");
// Gmsh's serial Delaunay mesher: the same mesh on every machine and thread count, so that runs compare
// (femto-app would otherwise use the parallel HXT, whose mesh depends on how its threads interleave).
Mesh.Algorithm3D = 1;
Box(1) = {0, 0, 0, 1, 0.1, 0.1};
Physical Volume("beam") = {1};
Physical Surface("clamp") = Surface In BoundingBox{-0.001, -0.001, -0.001, 0.001, 0.101, 0.101};
Physical Surface("top") = Surface In BoundingBox{-0.001, -0.001, 0.099, 1.001, 0.101, 0.101};
Physical Surface("tip") = Surface In BoundingBox{0.999, -0.001, -0.001, 1.001, 0.101, 0.101};
