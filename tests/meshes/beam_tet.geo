// Cantilever beam 1 x 0.1 x 0.1 m, unstructured tetrahedra (size from the problem's <mesh size>, default
// 0.05); "clamp" at x = 0, "top" at z = 0.1. Delaunay (not HXT), so that a size always gives the same mesh.
Mesh.Algorithm3D = 1;
lc = 0.05;
Point(1) = {0, 0, 0, lc}; Point(2) = {1, 0, 0, lc}; Point(3) = {1, 0.1, 0, lc}; Point(4) = {0, 0.1, 0, lc};
Point(5) = {0, 0, 0.1, lc}; Point(6) = {1, 0, 0.1, lc}; Point(7) = {1, 0.1, 0.1, lc}; Point(8) = {0, 0.1, 0.1, lc};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1};
Line(5) = {5, 6}; Line(6) = {6, 7}; Line(7) = {7, 8}; Line(8) = {8, 5};
Line(9) = {1, 5}; Line(10) = {2, 6}; Line(11) = {3, 7}; Line(12) = {4, 8};
Curve Loop(1) = {1, 2, 3, 4};     Plane Surface(1) = {1};  // z = 0
Curve Loop(2) = {5, 6, 7, 8};     Plane Surface(2) = {2};  // z = 0.1
Curve Loop(3) = {1, 10, -5, -9};  Plane Surface(3) = {3};  // y = 0
Curve Loop(4) = {2, 11, -6, -10}; Plane Surface(4) = {4};  // x = 1
Curve Loop(5) = {3, 12, -7, -11}; Plane Surface(5) = {5};  // y = 0.1
Curve Loop(6) = {4, 9, -8, -12};  Plane Surface(6) = {6};  // x = 0
Surface Loop(1) = {1, 2, 3, 4, 5, 6};
Volume(1) = {1};
Physical Volume("beam") = {1};
Physical Surface("clamp") = {6};
Physical Surface("top") = {2};
Physical Surface("tip") = {4};
