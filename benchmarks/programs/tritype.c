/* Triangle classification, the classic testing example: reads three side lengths from the
   command line and prints the kind of triangle. Shipped with `tritype.tests` for
   `covprune measure`. */
#include <stdio.h>
#include <stdlib.h>

enum kind { NOT_A_TRIANGLE, SCALENE, ISOSCELES, EQUILATERAL };

static int classify(int a, int b, int c)
{
    int match = 0;
    if (a <= 0 || b <= 0 || c <= 0)
        return NOT_A_TRIANGLE;
    if (a == b)
        match = match + 1;
    if (a == c)
        match = match + 2;
    if (b == c)
        match = match + 3;
    if (match == 0) {
        if (a + b <= c || b + c <= a || a + c <= b)
            return NOT_A_TRIANGLE;
        return SCALENE;
    }
    if (match > 3)
        return EQUILATERAL;
    if (match == 1 && a + b > c)
        return ISOSCELES;
    if (match == 2 && a + c > b)
        return ISOSCELES;
    if (match == 3 && b + c > a)
        return ISOSCELES;
    return NOT_A_TRIANGLE;
}

int main(int argc, char **argv)
{
    static const char *names[] = { "not a triangle", "scalene", "isosceles", "equilateral" };
    int k;
    if (argc != 4) {
        fprintf(stderr, "usage: tritype A B C\n");
        return 2;
    }
    k = classify(atoi(argv[1]), atoi(argv[2]), atoi(argv[3]));
    printf("%s\n", names[k]);
    return 0;
}
