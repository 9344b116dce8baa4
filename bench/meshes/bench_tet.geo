// femto-bench: unit cube of unstructured tetrahedra (Gmsh's HXT Delaunay mesher). femto-bench chooses the
// element size from the requested element count.
SetFactory("OpenCASCADE");
Box(1) = {0, 0, 0, 1, 1, 1};
Mesh.Algorithm3D = 10;
Physical Volume("domain") = {1};
