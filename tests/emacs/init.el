;;; init.el --- the minimal Emacs setup the Eglot end-to-end test runs (and docs/emacs.md shows)
;; Only what a person needs: Eglot starts `verbatim lsp' for text files.
(setq native-comp-deferred-compilation nil   ; no background compiling of packages
      native-comp-async-report-warnings-errors 'silent
      warning-minimum-level :error)
(package-initialize)
(require 'eglot)
(add-to-list 'eglot-server-programs '((text-mode) . ("verbatim" "lsp")))
(add-hook 'text-mode-hook #'eglot-ensure)
;; Quieter for the test's screen reads; none of this changes what Eglot does.
(setq inhibit-startup-screen t
      make-backup-files nil
      auto-save-default nil
      create-lockfiles nil)
