// A steel slab 0.1 m thick (x), represented by a 0.1 x 0.01 x 0.01 m bar of hexahedra with insulated sides.
// x = 0 is suddenly held at 373.15 K; x = 0.1 m is insulated.
Point(1) = {0, 0, 0}; Point(2) = {0, 0.01, 0}; Point(3) = {0, 0.01, 0.01}; Point(4) = {0, 0, 0.01};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Transfinite Curve{1, 2, 3, 4} = 2; Transfinite Surface{1}; Recombine Surface{1};
out[] = Extrude {0.1, 0, 0} { Surface{1}; Layers{20}; Recombine; };
Physical Volume("slab") = {out[1]};
Physical Surface("heated") = {1};
Physical Surface("insulated") = {out[0]};
