// tet4 cells: see cube.geo.
hexes=0;
Include "cube.geo";
Mesh.ElementOrder = 1;
