/* The Gmsh library, loaded when a mesh is first read or made rather than when the program starts.
 *
 * Gmsh and what it links (OpenCASCADE, FLTK, X11: 76 of femto-app's 162 shared libraries) took 0.1 s of every
 * start of femto-app, most of the start-up, whether or not the run used Gmsh; a run whose mesh comes from femto's cache
 * or another reader never does, and the reading child (io/mesh_child.c) is where a .msh or .geo is read. So
 * femto is not linked against Gmsh: io/gmsh_load.c defines the Gmsh C functions femto calls, and each one
 * loads the library on first use (dlopen: the build's library file, else its soname through the loader's
 * search path) and calls through. A test that links Gmsh itself still works: the definitions then call the
 * library already loaded. */
#ifndef FEMTO_GMSH_LOAD_H
#define FEMTO_GMSH_LOAD_H

#include <stddef.h>

/* Loads Gmsh if it is not yet loaded. A library that cannot be loaded, or lacks a function femto calls, is
 * FEM_ERR_INTERNAL with one sentence naming it (then every Gmsh call sets its error flag). */
int gmsh_library_load(void);

/* The file gmsh_library_load tries first (the library the build linked against), or NULL where it does not exist
 * and the loader's search path decides: what the mesh cache's key names, without loading anything. */
const char *gmsh_library_file(void);

#endif
