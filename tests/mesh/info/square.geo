// Unit square in 4 x 4 structured (transfinite) cells: squares of side 1/4, or each square split into two
// triangles when `quads` is 0. Included by tri3.geo, tri6.geo, quad4.geo, quad9.geo, which set `quads` and
// the element order.
Point(1) = {0, 0, 0}; Point(2) = {1, 0, 0}; Point(3) = {1, 1, 0}; Point(4) = {0, 1, 0};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Transfinite Curve{1, 2, 3, 4} = 5;
Transfinite Surface{1};
If (quads)
  Recombine Surface{1};
EndIf
Physical Surface("domain") = {1};
Physical Curve("boundary") = {1, 2, 3, 4};
Physical Curve("left") = {4};
