// Parallelepiped: the parallelogram (0,0), (1,0), (1.3,0.8), (0.3,0.8) in 3 x 2 structured cells, extruded
// along (0.2, 0.1, 0.9) in 2 layers. Every hexahedron is a parallelepiped, so every cell's map is affine.
Point(1) = {0, 0, 0}; Point(2) = {1, 0, 0}; Point(3) = {1.3, 0.8, 0}; Point(4) = {0.3, 0.8, 0};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Transfinite Curve{1, 3} = 4;
Transfinite Curve{2, 4} = 3;
Transfinite Surface{1};
Recombine Surface{1};
out[] = Extrude {0.2, 0.1, 0.9} { Surface{1}; Layers{2}; Recombine; };
Physical Volume("domain") = {out[1]};
Physical Surface("boundary") = {1, out[0], out[2], out[3], out[4], out[5]};
