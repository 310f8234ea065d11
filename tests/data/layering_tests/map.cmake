# Fixture map for the layering check over tests (tests/CMakeLists.txt, layering_refuses_upward_test).
set(STAGES base model analyses)
set(TOP cli)
set(ALLOWED_base base)
set(ALLOWED_model model base)
set(ALLOWED_analyses analyses model base)
