// A steel bar 1 m long (x) with a 0.1 m x 0.1 m section; hexahedra 20 x 2 x 2. "cold" is the face x = 0
// (held at the reference temperature and clamped), "hot" the face x = 1 (held 100 K warmer, free).
Point(1) = {0, 0, 0}; Point(2) = {0, 0.1, 0}; Point(3) = {0, 0.1, 0.1}; Point(4) = {0, 0, 0.1};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Transfinite Curve{1, 2, 3, 4} = 3; Transfinite Surface{1}; Recombine Surface{1};
out[] = Extrude {1, 0, 0} { Surface{1}; Layers{20}; Recombine; };
Physical Volume("bar") = {out[1]};
Physical Surface("cold") = {1};
Physical Surface("hot") = {out[0]};
