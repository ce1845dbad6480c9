/* The paper's Figure 1 (LClean, ICSE 2018): the triangle type with labels l1-l14. */
#ifndef pc_label
#define pc_label(...) do{}while(0)
#endif

int triangle_type(int x, int y, int z)
{
  int type = 0;
  pc_label(x == y && y == z, 1, "DC");
  pc_label(x != y || y != z, 2, "DC");
  pc_label(x == y, 3, "CC");
  pc_label(x != y, 4, "CC");
  if (x == y && y == z) {
    type = type + 1;
  }
  pc_label(x == y || y == z || x == z, 5, "DC");
  pc_label(x != y && y != z && x != z, 6, "DC");
  pc_label(x == y, 7, "CC");
  pc_label(x != y, 8, "CC");
  pc_label(x != y && y == z && x == z, 9, "MCC");
  pc_label(x == y && y != z && x == z, 10, "MCC");
  if (x == y || y == z || x == z) {
    pc_label(type + 1 != type + 2, 11, "WM");
    pc_label(type + 1 != type, 12, "WM");
    pc_label(type + 1 != -type + 1, 13, "WM");
    pc_label(type + 1 != 1, 14, "WM");
    type = type + 1;
  }
  return type;
}
