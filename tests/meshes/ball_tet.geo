// Unit ball (radius 1, centre 0) of unstructured tetrahedra, from an OpenCASCADE sphere; element size 0.5.
// Curved geometry for second-order meshes: read with order 2, the mid-edge nodes of boundary edges lie on
// the sphere.
SetFactory("OpenCASCADE");
Sphere(1) = {0, 0, 0, 1};
Mesh.CharacteristicLengthMax = 0.5;
Physical Volume("ball") = {1};
Physical Surface("sphere") = {1};
