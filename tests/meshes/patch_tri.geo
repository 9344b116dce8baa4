// Distorted patch of the rectangle 0.24 x 0.12 (MacNeal & Harder, "A proposed standard set of problems
// to test finite element accuracy", Finite Elements in Analysis and Design 1, 1985): an inner
// quadrilateral with the corners below joined to the rectangle's corners, meshed with unstructured triangles. For the patch test.
lc = 0.05;
Point(1) = {0, 0, 0, lc};
Point(2) = {0.24, 0, 0, lc};
Point(3) = {0.24, 0.12, 0, lc};
Point(4) = {0, 0.12, 0, lc};
Point(5) = {0.04, 0.02, 0, lc};
Point(6) = {0.18, 0.03, 0, lc};
Point(7) = {0.16, 0.08, 0, lc};
Point(8) = {0.08, 0.08, 0, lc};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1};
Line(5) = {5, 6}; Line(6) = {6, 7}; Line(7) = {7, 8}; Line(8) = {8, 5};
Line(9) = {1, 5}; Line(10) = {2, 6}; Line(11) = {3, 7}; Line(12) = {4, 8};
Curve Loop(1) = {5, 6, 7, 8}; Plane Surface(1) = {1};
Curve Loop(2) = {1, 10, -5, -9}; Plane Surface(2) = {2};
Curve Loop(3) = {2, 11, -6, -10}; Plane Surface(3) = {3};
Curve Loop(4) = {3, 12, -7, -11}; Plane Surface(4) = {4};
Curve Loop(5) = {4, 9, -8, -12}; Plane Surface(5) = {5};
Physical Surface("domain") = {1, 2, 3, 4, 5};
Physical Curve("boundary") = {1, 2, 3, 4};
Physical Curve("left") = {4};
Physical Curve("right") = {2};
