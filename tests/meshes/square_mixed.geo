// Unit square of two halves: [0,0.5] x [0,1] in 2 x 4 structured quadrilaterals ("quads") and
// [0.5,1] x [0,1] in 2 x 4 structured squares split into 2 triangles each ("tris"). The line x = 0.5 is an
// interface between the halves ("interface"), the outer boundary is "boundary".
Point(1) = {0, 0, 0}; Point(2) = {0.5, 0, 0}; Point(3) = {1, 0, 0};
Point(4) = {1, 1, 0}; Point(5) = {0.5, 1, 0}; Point(6) = {0, 1, 0};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 5};
Line(5) = {5, 6}; Line(6) = {6, 1}; Line(7) = {2, 5};
Curve Loop(1) = {1, 7, 5, 6}; Plane Surface(1) = {1};
Curve Loop(2) = {2, 3, 4, -7}; Plane Surface(2) = {2};
Transfinite Curve{1, 2, 4, 5} = 3;
Transfinite Curve{3, 6, 7} = 5;
Transfinite Surface{1};
Transfinite Surface{2};
Recombine Surface{1};
Physical Surface("quads") = {1};
Physical Surface("tris") = {2};
Physical Curve("boundary") = {1, 2, 3, 4, 5, 6};
Physical Curve("interface") = {7};
