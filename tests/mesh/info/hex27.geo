// hex27 cells: see cube.geo.
hexes=1;
Include "cube.geo";
Mesh.ElementOrder = 2;
