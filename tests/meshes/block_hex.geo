// Structured block [0,2] x [0,1] x [0,1.5] of 2 x 3 x 4 hexahedra (transfinite, recombined): every count
// follows from (nx, ny, nz) = (2, 3, 4), and every cell is a box of 1 x 1/3 x 3/8.
nx = 2; ny = 3; nz = 4;
Point(1) = {0, 0, 0}; Point(2) = {2, 0, 0}; Point(3) = {2, 1, 0}; Point(4) = {0, 1, 0};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Transfinite Curve{1, 3} = nx + 1;
Transfinite Curve{2, 4} = ny + 1;
Transfinite Surface{1};
Recombine Surface{1};
out[] = Extrude {0, 0, 1.5} { Surface{1}; Layers{nz}; Recombine; };
Physical Volume("block") = {out[1]};
Physical Surface("bottom") = {1};
Physical Surface("top") = {out[0]};
Physical Surface("sides") = {out[2], out[3], out[4], out[5]};
