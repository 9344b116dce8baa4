// Unit disk (radius 1, centre 0) of unstructured quadrilaterals (recombined triangles); element size 0.3.
SetFactory("OpenCASCADE");
Disk(1) = {0, 0, 0, 1};
Mesh.CharacteristicLengthMax = 0.3;
Recombine Surface{1};
Mesh.RecombinationAlgorithm = 1;
Physical Surface("disk") = {1};
Physical Curve("circle") = {1};
