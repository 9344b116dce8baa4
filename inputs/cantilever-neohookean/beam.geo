// Cantilever beam: 1 m long (x), 0.1 m wide (y), 0.1 m high (z); hexahedra, 20 x 1 x 1 (element order 2
// resolves bending through the thickness).
// "clamp" is the face x = 0, "tip" the face x = 1.
L = 1.0; W = 0.1; H = 0.1;
Point(1) = {0, 0, 0};
l[] = Extrude {L, 0, 0} { Point{1}; Layers{20}; };
s[] = Extrude {0, W, 0} { Line{l[1]}; Layers{1}; Recombine; };
v[] = Extrude {0, 0, H} { Surface{s[1]}; Layers{1}; Recombine; };
// v[1] is the volume; v[2..5] are the sides swept from the lines y = 0, x = L, y = W, x = 0
Physical Volume("beam") = {v[1]};
Physical Surface("clamp") = {v[5]};
Physical Surface("tip") = {v[3]};
