// Unit cube of unstructured tetrahedra for the solver benchmark; the element size comes from the problem file.
SetFactory("OpenCASCADE");
// Gmsh's serial Delaunay mesher: the same mesh on every machine and thread count, so that runs compare
// (femto-app would otherwise use the parallel HXT, whose mesh depends on how its threads interleave).
Mesh.Algorithm3D = 1;
Box(1) = {0, 0, 0, 1, 1, 1};
Physical Volume("cube") = {1};
Physical Surface("cold", 1) = Surface In BoundingBox{-0.01, -0.01, -0.01, 0.01, 1.01, 1.01};
Physical Surface("sides", 2) = Surface In BoundingBox{-0.01, -0.01, -0.01, 1.01, 1.01, 1.01};
