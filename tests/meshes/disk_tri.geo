// Unit disk (radius 1, centre 0) of unstructured triangles, from an OpenCASCADE disk; element size 0.3.
SetFactory("OpenCASCADE");
Disk(1) = {0, 0, 0, 1};
Mesh.CharacteristicLengthMax = 0.3;
Physical Surface("disk") = {1};
Physical Curve("circle") = {1};
