// A Gmsh script with a syntax error on line 3 (a missing closing brace).
Point(1) = {0, 0, 0, 0.5};
Point(2) = {1, 0, 0, 0.5;
Line(1) = {1, 2};
