// A host-only translation unit: nvcc passes .cpp files to the host compiler.
int host_checksum(int n)
{
    int s = 0;
    for (int i = 0; i < n; ++i)
        s += i * i;
    return s;
}
