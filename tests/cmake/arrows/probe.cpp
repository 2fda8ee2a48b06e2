// An empty translation unit: the arrow projects are only configured, never built.
