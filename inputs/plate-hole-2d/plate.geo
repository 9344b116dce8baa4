// Meshed with second-order (curved) quadrilaterals: gmsh -2 -order 2 plate.geo -o plate.msh
// A square plate 1 m x 1 m with a central hole of radius 0.05 m, pulled along x. By symmetry one quarter is
// modelled: x, y in [0, 0.5], the hole centred at the origin. Quadrilaterals, refined towards the hole.
a = 0.05; W = 0.5;
Point(1) = {a, 0, 0, 0.006}; Point(2) = {W, 0, 0, 0.04}; Point(3) = {W, W, 0, 0.06};
Point(4) = {0, W, 0, 0.04}; Point(5) = {0, a, 0, 0.006}; Point(6) = {0, 0, 0};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 5};
Circle(5) = {5, 6, 1};
Curve Loop(1) = {1, 2, 3, 4, 5};
Plane Surface(1) = {1};
Recombine Surface{1};
Mesh.RecombinationAlgorithm = 1;
Physical Surface("plate") = {1};
Physical Curve("symmetry-x") = {1};  // y = 0: uy = 0
Physical Curve("symmetry-y") = {4};  // x = 0: ux = 0
Physical Curve("pulled") = {2};      // x = W: traction along x
Physical Curve("hole") = {5};
