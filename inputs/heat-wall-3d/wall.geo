// A 1 m x 1 m patch of a composite wall: 0.2 m of brick (x in [0, 0.2]) and 0.1 m of insulation
// (x in [0.2, 0.3]). Inside face at 293.15 K, outside face convects to 263.15 K air; the cut edges are
// insulated (the patch repeats sideways). Unstructured tetrahedra.
SetFactory("OpenCASCADE");
Box(1) = {0, 0, 0, 0.2, 1, 1};
Box(2) = {0.2, 0, 0, 0.1, 1, 1};
BooleanFragments{ Volume{1}; Delete; }{ Volume{2}; Delete; }
Mesh.MeshSizeMax = 0.1;
Physical Volume("brick") = {1};
Physical Volume("insulation") = {2};
Physical Surface("inside", 1) = Surface In BoundingBox{-0.01, -0.01, -0.01, 0.01, 1.01, 1.01};
Physical Surface("outside", 2) = Surface In BoundingBox{0.29, -0.01, -0.01, 0.31, 1.01, 1.01};
