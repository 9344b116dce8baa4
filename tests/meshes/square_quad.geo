// Unit square, unstructured quadrilaterals (recombined); "boundary" is the whole boundary.
Point(1) = {0, 0, 0, 0.25}; Point(2) = {1, 0, 0, 0.25}; Point(3) = {1, 1, 0, 0.25}; Point(4) = {0, 1, 0, 0.25};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Recombine Surface{1};
Mesh.RecombinationAlgorithm = 1;
Physical Surface("domain") = {1};
Physical Curve("boundary") = {1, 2, 3, 4};
Physical Curve("left") = {4};
Physical Curve("right") = {2};
