// A script that defines only curves: there is nothing of dimension 2 or 3 to mesh.
Point(1) = {0, 0, 0, 0.5}; Point(2) = {1, 0, 0, 0.5}; Point(3) = {1, 1, 0, 0.5};
Line(1) = {1, 2}; Line(2) = {2, 3};
Physical Curve("wire") = {1, 2};
