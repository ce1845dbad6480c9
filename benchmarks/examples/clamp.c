#include <stdio.h>
#include <stdlib.h>

int clamp(int x, int lo, int hi) {
  if (lo > hi)
    return -1;
  if (x < lo || (x > hi && x < lo))
    return lo;
  if (x > hi)
    return hi;
  return x;
}

int main(int argc, char **argv) {
  if (argc < 4)
    return 2;
  printf("%d\n", clamp(atoi(argv[1]), atoi(argv[2]), atoi(argv[3])));
  return 0;
}
