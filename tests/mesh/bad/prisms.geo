// A triangle extruded in one layer: prisms (wedges), which femto does not read.
Point(1) = {0, 0, 0}; Point(2) = {1, 0, 0}; Point(3) = {0, 1, 0};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 1};
Curve Loop(1) = {1, 2, 3};
Plane Surface(1) = {1};
Transfinite Curve{1, 2, 3} = 2;
out[] = Extrude {0, 0, 1} { Surface{1}; Layers{1}; Recombine; };
Physical Volume("wedge") = {out[1]};
