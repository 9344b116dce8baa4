// Unit cube in 2 x 2 x 2 structured (transfinite) hexahedra of side 1/2, or each of them split into
// tetrahedra when `hexes` is 0. Included by tet4.geo, tet10.geo, hex8.geo, hex27.geo, which set `hexes` and
// the element order.
Point(1) = {0, 0, 0}; Point(2) = {1, 0, 0}; Point(3) = {1, 1, 0}; Point(4) = {0, 1, 0};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Transfinite Curve{1, 2, 3, 4} = 3;
Transfinite Surface{1};
If (hexes)
  Recombine Surface{1};
  out[] = Extrude {0, 0, 1} { Surface{1}; Layers{2}; Recombine; };
Else
  out[] = Extrude {0, 0, 1} { Surface{1}; Layers{2}; };
EndIf
Physical Volume("domain") = {out[1]};
Physical Surface("boundary") = {1, out[0], out[2], out[3], out[4], out[5]};
Physical Surface("bottom") = {1};
