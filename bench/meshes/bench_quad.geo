// femto-bench: unit square of unstructured quadrilaterals: Frontal-Delaunay triangles, recombined into quads
// (simple recombination), then every element split into quadrilaterals (Mesh.SubdivisionAlgorithm = 1), so no
// triangle is left. femto-bench chooses the element size from the requested element count.
// (Gmsh 4.8's quad-dominant Frontal-Delaunay, Mesh.Algorithm = 8, crashes on this square.)
Point(1) = {0, 0, 0, 1}; Point(2) = {1, 0, 0, 1}; Point(3) = {1, 1, 0, 1}; Point(4) = {0, 1, 0, 1};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Mesh.Algorithm = 6;
Mesh.RecombinationAlgorithm = 0;
Recombine Surface{1};
Mesh.SubdivisionAlgorithm = 1;
Physical Surface("domain") = {1};
