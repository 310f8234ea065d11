# Fixture map for the layering check's negative test (tests/CMakeLists.txt, layering_refuses_upward).
set(STAGES base model)
set(ALLOWED_base base)
set(ALLOWED_model model base)
