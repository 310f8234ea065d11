// Fixture: a stage's header, so that SRC is a tree with the stages' folders.
#pragma once
