// Cantilever beam 1 x 0.1 x 0.1 m along x, structured hexahedra (nx x ny x nz), extruded from a point.
// Groups: "domain"; "left" (x = 0, the clamp), "right" (x = 1, the free end), "top" (z = 0.1),
// "bottom" (z = 0), "boundary" (all six faces).
L = 1.0; H = 0.1; W = 0.1;
nx = 40; ny = 2; nz = 2;
Point(1) = {0, 0, 0};
l[] = Extrude {L, 0, 0} { Point{1}; Layers{nx}; };
s[] = Extrude {0, W, 0} { Line{l[1]}; Layers{ny}; Recombine; };
v[] = Extrude {0, 0, H} { Surface{s[1]}; Layers{nz}; Recombine; };
// v[0]: top, v[1]: volume, v[2..5]: the sides from the extruded lines (y = 0, x = L, y = W, x = 0)
Physical Volume("domain") = {v[1]};
Physical Surface("left") = {v[5]};
Physical Surface("right") = {v[3]};
Physical Surface("top") = {v[0]};
Physical Surface("bottom") = {s[1]};
Physical Surface("boundary") = {s[1], v[0], v[2], v[3], v[4], v[5]};
