// A straight aluminium fin, 50 mm long and 2 mm thick, seen in its 2D section (x along the fin, y across).
// Base (x = 0) held at 373.15 K; both faces convect to air; the tip is insulated.
L = 0.05; t = 0.002;
Point(1) = {0, 0, 0}; Point(2) = {L, 0, 0}; Point(3) = {L, t, 0}; Point(4) = {0, t, 0};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Transfinite Curve{1, 3} = 101; Transfinite Curve{2, 4} = 5;
Transfinite Surface{1}; Recombine Surface{1};
Physical Surface("fin") = {1};
Physical Curve("base") = {4};
Physical Curve("faces") = {1, 3};
Physical Curve("tip") = {2};
