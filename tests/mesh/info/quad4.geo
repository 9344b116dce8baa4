// quad4 cells: see square.geo.
quads=1;
Include "square.geo";
Mesh.ElementOrder = 1;
