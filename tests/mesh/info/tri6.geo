// tri6 cells: see square.geo.
quads=0;
Include "square.geo";
Mesh.ElementOrder = 2;
