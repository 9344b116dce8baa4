// Meshed with second-order (curved) quadrilaterals: gmsh -2 -order 2 cylinder.geo -o cylinder.msh
// A thick-walled cylinder, inner radius 0.1 m, outer radius 0.2 m, in plane strain. One quarter of the
// section is modelled (symmetry on x = 0 and y = 0). Quadrilaterals, 8 across the wall, 24 around.
a = 0.1; b = 0.2;
Point(1) = {0, 0, 0}; Point(2) = {a, 0, 0}; Point(3) = {b, 0, 0}; Point(4) = {0, b, 0}; Point(5) = {0, a, 0};
Line(1) = {2, 3}; Circle(2) = {3, 1, 4}; Line(3) = {4, 5}; Circle(4) = {5, 1, 2};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Transfinite Curve{1, 3} = 9; Transfinite Curve{2, 4} = 25;
Transfinite Surface{1}; Recombine Surface{1};
Physical Surface("wall") = {1};
Physical Curve("y0") = {1};      // y = 0: uy = 0
Physical Curve("x0") = {3};      // x = 0: ux = 0
Physical Curve("inner") = {4};
Physical Curve("outer") = {2};
