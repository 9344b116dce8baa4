// tri3 cells: see square.geo.
quads=0;
Include "square.geo";
Mesh.ElementOrder = 1;
