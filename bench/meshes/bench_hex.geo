// femto-bench: unit cube of unstructured hexahedra: an unstructured tetrahedral mesh (HXT) in which Gmsh splits
// every tetrahedron into 4 hexahedra (Mesh.SubdivisionAlgorithm = 2), so the hexes are unstructured in all three
// directions. femto-bench chooses the element size from the requested element count.
SetFactory("OpenCASCADE");
Box(1) = {0, 0, 0, 1, 1, 1};
Mesh.Algorithm3D = 10;
Mesh.SubdivisionAlgorithm = 2;
Physical Volume("domain") = {1};
