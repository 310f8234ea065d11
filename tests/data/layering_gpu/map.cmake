# Fixture map for the layering check's GPU-side test (tests/CMakeLists.txt, layering_refuses_gpu_side).
set(STAGES shared base kernel)
set(ALLOWED_shared shared)
set(ALLOWED_base base)
set(ALLOWED_kernel kernel base)
