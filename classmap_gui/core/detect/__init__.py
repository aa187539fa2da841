"""Finding the hand in a frame: dense HOG of every window (``dense_hog``, ``pyramid``), the windows
classified by ClassMap or brute force with background rejection (``scanner``), and the background
class's generated examples (``background``). See docs/detect.md."""
