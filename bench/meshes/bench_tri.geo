// femto-bench: unit square of unstructured triangles (Frontal-Delaunay). femto-bench chooses the element size
// (Mesh.CharacteristicLengthMax) from the requested element count.
Point(1) = {0, 0, 0, 1}; Point(2) = {1, 0, 0, 1}; Point(3) = {1, 1, 0, 1}; Point(4) = {0, 1, 0, 1};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Mesh.Algorithm = 6;
Physical Surface("domain") = {1};
