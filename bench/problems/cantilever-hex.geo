// Cantilever for the solver benchmark (issue 11): the beam of cantilever-tet.geo, 1 x 0.1 x 0.1 m, of structured
// hexahedra (extruded layers), n = round(L / h) cells along each side of length L, where h is the problem file's
// <mesh size="..."> (Mesh.CharacteristicLengthMax; 0.025 m when the problem gives none).
// Groups: "beam" (the volume), "clamp" (x = 0), "top" (z = 0.1, loaded), "tip" (x = 1).
L = 1.0; W = 0.1; H = 0.1;
h = Mesh.CharacteristicLengthMax;
If (h > W)
  h = 0.025;
EndIf
nx = Round(L / h); ny = Round(W / h); nz = Round(H / h);
If (ny < 1)
  ny = 1; nz = 1;
EndIf
Point(1) = {0, 0, 0};
l[] = Extrude {L, 0, 0} { Point{1}; Layers{nx}; };
s[] = Extrude {0, W, 0} { Line{l[1]}; Layers{ny}; Recombine; };
v[] = Extrude {0, 0, H} { Surface{s[1]}; Layers{nz}; Recombine; };
// v[0]: the top (z = H), v[1]: the volume, v[2..5]: the sides swept from the lines y = 0, x = L, y = W, x = 0
Physical Volume("beam") = {v[1]};
Physical Surface("clamp") = {v[5]};
Physical Surface("top") = {v[0]};
Physical Surface("tip") = {v[3]};
