/* Links the public API through find_package(gpumemtrace). Run without the preload
 * library active, the API reports that nothing is being recorded. */
#include <gpumemtrace.h>
#include <stdio.h>

int main(void) {
    gpumemtrace_mark_phase("consumer");
    printf("active=%d\n", gpumemtrace_active());
    return 0;
}
