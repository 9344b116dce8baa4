/* Physics registry (filled in by the heat and elasticity work). */
int physics_placeholder(void) { return 0; }
