//! What covprune knows of C library functions: which never return and which always do.
//! The proof engine extends this table with memory effects.

/// Functions that never return, whatever their declaration says.
pub const NEVER_RETURNS: &[&str] = &[
    "exit",
    "_exit",
    "_Exit",
    "quick_exit",
    "abort",
    "longjmp",
    "_longjmp",
    "siglongjmp",
    "__longjmp_chk",
    "__assert_fail",
    "__assert_perror_fail",
    "__assert",
    "__builtin_trap",
    "__builtin_abort",
    "__builtin_exit",
    "__stack_chk_fail",
    "__chk_fail",
    "pthread_exit",
    "err",
    "errx",
    "verr",
    "verrx",
    "thrd_exit",
];

/// Library functions known to return to their caller (they may fail, but they come back).
/// Anything external not listed here may not return (it could call `exit` or `longjmp`).
pub const ALWAYS_RETURN: &[&str] = &[
    "abs", "labs", "llabs", "atoi", "atol", "atoll", "strtol", "strtoul", "strtoll", "strtoull",
    "strtod", "strtof", "malloc", "calloc", "realloc", "free", "memcpy", "memmove", "memset",
    "memcmp", "memchr", "strlen", "strnlen", "strcpy", "strncpy", "strcat", "strncat", "strcmp",
    "strncmp", "strchr", "strrchr", "strstr", "strdup", "strndup", "strspn", "strcspn", "strpbrk",
    "strtok", "strerror", "printf", "fprintf", "sprintf", "snprintf", "vprintf", "vfprintf",
    "vsprintf", "vsnprintf", "puts", "fputs", "putchar", "fputc", "putc", "getchar", "fgetc",
    "getc", "fgets", "gets", "ungetc", "scanf", "fscanf", "sscanf", "fopen", "fclose", "fread",
    "fwrite", "fseek", "ftell", "rewind", "fflush", "feof", "ferror", "clearerr", "perror",
    "isalpha", "isdigit", "isalnum", "isspace", "isupper", "islower", "isprint", "ispunct",
    "isxdigit", "iscntrl", "isgraph", "toupper", "tolower", "__ctype_b_loc",
    "__ctype_toupper_loc", "__ctype_tolower_loc", "time", "clock", "rand", "srand", "qsort",
    "bsearch", "getenv", "open", "close", "read", "write", "lseek", "unlink", "stat", "fstat",
    "lstat", "setjmp", "_setjmp", "__sigsetjmp", "sqrt", "pow", "floor", "ceil", "fabs", "exp",
    "log", "sin", "cos", "__errno_location", "__builtin_memcpy", "__builtin_memset",
    "__builtin_strlen", "__builtin_va_start", "__builtin_va_copy", "__builtin_alloca", "alloca",
];
