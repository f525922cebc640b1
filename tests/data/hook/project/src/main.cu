// Host entry point of the hook test project (no GPU is needed to build it).
#include <cstdio>

void launch(const float* in, float* out, int threads);
int host_checksum(int n);

int main()
{
    std::printf("checksum %d\n", host_checksum(10));
    return 0;
}
