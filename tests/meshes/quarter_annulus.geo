// Quarter of a thick-walled cylinder's cross-section: inner radius 1, outer radius 2, x >= 0, y >= 0,
// structured quadrilaterals (nr across the wall, nt around). Groups: "domain"; "inner" (r = 1), "outer"
// (r = 2), "bottom" (y = 0), "side" (x = 0). Mesh with order 2 for exact-enough arcs.
a = 1.0; b = 2.0;
nr = 8; nt = 16;
Point(1) = {0, 0, 0};
Point(2) = {a, 0, 0}; Point(3) = {b, 0, 0}; Point(4) = {0, b, 0}; Point(5) = {0, a, 0};
Line(1) = {2, 3};
Circle(2) = {3, 1, 4};
Line(3) = {4, 5};
Circle(4) = {5, 1, 2};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Transfinite Curve{1, 3} = nr + 1;
Transfinite Curve{2, 4} = nt + 1;
Transfinite Surface{1};
Recombine Surface{1};
Physical Surface("domain") = {1};
Physical Curve("inner") = {4};
Physical Curve("outer") = {2};
Physical Curve("bottom") = {1};
Physical Curve("side") = {3};
