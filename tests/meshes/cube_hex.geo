// Unit cube of hexahedra, built by recombining an unstructured surface mesh and extruding it.
Point(1) = {0, 0, 0, 0.5}; Point(2) = {1, 0, 0, 0.5}; Point(3) = {1, 1, 0, 0.5}; Point(4) = {0, 1, 0, 0.5};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Recombine Surface{1};
Mesh.RecombinationAlgorithm = 1;
out[] = Extrude {0, 0, 1} { Surface{1}; Layers{2}; Recombine; };
Physical Volume("domain") = {out[1]};
Physical Surface("boundary") = {1, out[0], out[2], out[3], out[4], out[5]};
Physical Surface("left") = {out[5]};
Physical Surface("right") = {out[3]};
