// A strip 1 m long (x) and 0.1 m wide, quadrilaterals. u is held at 1 on the left end and 0 on the right end;
// the long sides are closed (no flux), so the solution depends on x alone.
L = 1; W = 0.1;
Point(1) = {0, 0, 0}; Point(2) = {L, 0, 0}; Point(3) = {L, W, 0}; Point(4) = {0, W, 0};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Transfinite Curve{1, 3} = 41; Transfinite Curve{2, 4} = 3;
Transfinite Surface{1}; Recombine Surface{1};
Physical Surface("strip") = {1};
Physical Curve("left") = {4};
Physical Curve("right") = {2};
